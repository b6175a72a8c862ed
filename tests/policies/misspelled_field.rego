package ctxgate

mask contains "secure-text" if {
	input.element.role == "Text"
	contains(lower(input.element.subrol), "secure")
}

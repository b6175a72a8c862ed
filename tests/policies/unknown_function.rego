package ctxgate

mask contains "secure-text" if {
	input.element.role == "Text"
	strings.contains_secure(input.element.subrole)
}

package ctxgate

mask contains "secure-text" if {
	input.element.role == "TextField"
	contains(lower(input.element.subrole), "secure")
}

keep contains "headings" if {
	input.inside[_].role in {"Heading", "Docment"}
}

package ctxgate

# Line 5 is not Rego: the parser's error names this file, its line and column.
scope := "app" if {
	input.action.name == = "app"
}

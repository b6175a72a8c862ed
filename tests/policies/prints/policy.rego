package ctxgate

# Prints what it reads: a declared attribute value and the app title's
# pattern names. During `trim` none of it may reach stderr; `policy test` shows it.

scope := "app"

element_attributes := {"AXValue"}

mask contains "secure-text" if {
	print("value:", input.element.attributes.AXValue, "title:", input.app.title_matches)
	input.element.attributes.AXValue == "hunter2"
}

keep contains "focus-path" if {
	print("focused?", input.element.focused)
	input.element.focused
}

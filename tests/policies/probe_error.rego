package ctxgate

priority := to_number("x") if {
	input.element.role == "Image"
} else := 1

keep contains "focus-path" if input.element.focused

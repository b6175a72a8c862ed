package ctxgate

scope := "app" if {
	input.element.focused
} else := "focus"

keep contains "focus-path" if input.element.focused

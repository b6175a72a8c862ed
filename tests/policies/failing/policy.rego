package ctxgate

keep contains "focus-path" if input.element.focused

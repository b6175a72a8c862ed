package ctxgate

priority := 100 if input.element.focused

priority := 90 if input.element.selected

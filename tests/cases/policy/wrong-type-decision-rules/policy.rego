package ctxgate

priority := "high" if input.element.focused

deny if input.element.role == "Row"

package ctxgate

masks contains "private" if input.element.role == "Row"

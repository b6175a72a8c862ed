package ctxgate

scope := "everything"

budget := 8000

priority := "high" if input.element.focused

deny if input.element.role == "Row"

mask contains "private" if input.element.attributes.x == "private"

masks contains "private" if input.element.role == "Row"

keep contains "focused" if input.element.subrol == "a"

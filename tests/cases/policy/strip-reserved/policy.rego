package ctxgate

strip contains "author"

strip contains "ctxgate:withheld" if input.action.name == "app"

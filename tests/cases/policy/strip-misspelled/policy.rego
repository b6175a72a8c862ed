package ctxgate

stirp contains "author" if input.action.name == "app"

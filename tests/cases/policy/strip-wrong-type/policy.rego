package ctxgate

strip := "author"

package ctxgate

scope := "app"

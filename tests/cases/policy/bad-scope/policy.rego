package ctxgate

scope := "everything"

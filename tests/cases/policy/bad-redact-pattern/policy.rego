package ctxgate

redact contains {"id": "broken", "pattern": "(unclosed"}

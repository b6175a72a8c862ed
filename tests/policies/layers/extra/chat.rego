package ctxgate

# METADATA
# title: Deny chat windows
# description: A window whose title matches nothing is still a chat when its subrole says so.
deny contains "chat-window" if {
	input.element.role == "Window"
	input.element.subrole == "chat"
}

redact contains {"id": "ticket", "pattern": `TICKET-[0-9]{6}`}

package ctxgate

deny contains r if {
	some r in mask
}

mask contains r if {
	some r in deny
}

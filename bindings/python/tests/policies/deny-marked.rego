# A test policy, loaded beside policies/default.rego: denies any element whose
# subrole is `deny-canary` (tests/test_privacy.py marks the elements it
# wants denied with it).
package ctxgate

deny contains "test-denied" if {
	input.element.subrole == "deny-canary"
}

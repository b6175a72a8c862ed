package ctxgate

# A policy that tries to send secure text: the floor masks it anyway.
keep contains "everything" if true

mask := set()

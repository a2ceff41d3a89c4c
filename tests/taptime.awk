# Splits the TAP of `bats --tap --timing`: each result line loses its
# " in Nms" (so a test's name is the same in every run) and that time goes to
# the file given with -v times=FILE as "MS<TAB>SUITE<TAB>TEST" (-v suite=NAME).
/^(not )?ok [0-9]+ / && match($0, / in [0-9]+ms( # (skip|SKIP).*)?$/) {
	head = substr($0, 1, RSTART - 1)
	rest = substr($0, RSTART + 4)
	ms = rest + 0
	sub(/^[0-9]+ms/, "", rest)
	print head rest
	name = head
	sub(/^(not )?ok [0-9]+ (- )?/, "", name)
	if (times != "")
		printf "%d\t%s\t%s\n", ms, suite, name >> times
	next
}
{ print }

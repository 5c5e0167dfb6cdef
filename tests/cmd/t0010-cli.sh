#!/bin/sh
# t0010-cli: conventions every tool shares, checked on every tfk-* in
# $TFK_BIN (new tools are covered without touching this file): --help and
# -h (stdout, exit 0, "usage:" and "Example:"), --version, an unknown
# option (exit 2, message and synopsis on stderr, nothing on stdout),
# SIGPIPE (`tfk-cat big | head -c 100` ends quietly), and
# scripts/check-man itself on fake tools.
. "$(dirname "$0")/lib.sh"

ROOT=$(cd "$TESTS/.." && pwd)
MNIST=$FIX/tfrecord/tfx_mnist/mnist.tfrecord

for t in "$TFK_BIN"/tfk-*; do
	[ -x "$t" ] || continue
	tool=$(basename "$t")

	"$t" --help >"$T/out" 2>"$T/err"
	rc=$?
	check "$tool --help: exit 0, usage/summary/Example on stdout, stderr empty" \
		sh -c "[ $rc -eq 0 ] && head -n 1 '$T/out' | grep -q '^usage: $tool' &&
		       grep -qx 'Example:' '$T/out' && grep -q '^Options:' '$T/out' &&
		       grep -q 'See $tool(1)' '$T/out' && [ ! -s '$T/err' ]"
	cp "$T/out" "$T/help"
	"$t" -h >"$T/out" 2>"$T/err"
	rc=$?
	check "$tool -h: same as --help" \
		sh -c "[ $rc -eq 0 ] && cmp -s '$T/out' '$T/help'"

	"$t" --version >"$T/out" 2>"$T/err"
	rc=$?
	check "$tool --version: exit 0, '$tool (tfkit) VERSION'" \
		sh -c "[ $rc -eq 0 ] && grep -qxE '$tool \\(tfkit\\) [0-9]+\\.[0-9]+\\.[0-9]+.*' '$T/out' &&
		       [ ! -s '$T/err' ]"

	"$t" --no-such-option </dev/null >"$T/out" 2>"$T/err"
	rc=$?
	check "$tool --no-such-option: exit 2, message and synopsis on stderr, stdout empty" \
		sh -c "[ $rc -eq 2 ] &&
		       grep -qxF \"$tool: unknown option '--no-such-option'\" '$T/err' &&
		       grep -q '^usage: $tool ' '$T/err' && [ ! -s '$T/out' ]"

	"$t" --no-such-option=1 x y </dev/null >"$T/out" 2>"$T/err"
	rc=$?
	check "$tool --no-such-option=1 among arguments: exit 2" \
		sh -c "[ $rc -eq 2 ] && grep -q 'unknown option' '$T/err'"
done

# SIGPIPE: a reader that stops early ends the writer quietly.
if [ -x "$TFK_BIN/tfk-cat" ]; then
	(timeout 60 tfk-cat --repeat 0 "$MNIST" 2>"$T/err"; echo $? >"$T/rc") |
		head -c 100 >"$T/out"
	check "tfk-cat --repeat 0 | head -c 100: 100 bytes, stderr empty" \
		sh -c "[ \$(wc -c <'$T/out') -eq 100 ] && [ ! -s '$T/err' ]"
	check "tfk-cat was ended by SIGPIPE (status 141), not by the timeout" \
		sh -c "[ \$(cat '$T/rc') -eq 141 ]"
	check "those 100 bytes are the file's first 100" \
		sh -c "head -c 100 '$MNIST' | cmp -s - '$T/out'"
	# a filter in the middle of the pipe ends the same way
	(timeout 60 tfk-cat --repeat 0 "$MNIST" 2>"$T/err1" |
	 tfk-cat 2>"$T/err2"; echo $? >"$T/rc") | head -c 100 >"$T/out"
	check "tfk-cat --repeat 0 | tfk-cat | head -c 100: quiet, ended by SIGPIPE" \
		sh -c "[ \$(wc -c <'$T/out') -eq 100 ] && [ ! -s '$T/err1' ] &&
		       [ ! -s '$T/err2' ] && [ \$(cat '$T/rc') -eq 141 ]"
fi

# scripts/check-man on fake tools ------------------------------------
mkdir -p "$T/bin" "$T/man"
cat >"$T/bin/tfk-fake" <<'EOF'
#!/bin/sh
case "$1" in
--help) cat <<'HELP' ;;
usage: tfk-fake [options] [FILE...]
a fake tool

Options:
  -n, --count N                how many (default: 1)
      --dry-run                do nothing (see --count)
  -h, --help                   show this help and exit
      --version                show the version and exit

Example:
  tfk-fake -n 2

See tfk-fake(1).
HELP
show) echo "Options:"; echo "      --signature NAME         which one" ;;
esac
EOF
chmod +x "$T/bin/tfk-fake"
page() {	# OPTIONS-SECTION-LINES...
	{
		printf '.TH TFK-FAKE 1\n.SH NAME\ntfk-fake \\- a fake tool\n'
		printf '.SH SYNOPSIS\n.B tfk-fake\n.SH DESCRIPTION\nFake.\n'
		printf '.SH OPTIONS\n'
		for l in "$@"; do printf '%s\n' "$l"; done
		printf '.SH "EXIT STATUS"\n0\n.SH ENVIRONMENT\nNone.\n'
		printf '.SH EXAMPLES\ntfk-fake\n.SH "SEE ALSO"\n.BR tfk-cat (1)\n'
	} >"$T/man/tfk-fake.1"
}
checkman() {
	TFK_MAN1="$T/man" "$ROOT/scripts/check-man" "$T/bin" >"$T/cm" 2>&1
}

page .TP '.BR \-n ", " \-\-count " N"' 'How many.' .TP '.B \-\-dry\-run' \
	'Nothing; see \fB\-\-count\fR.'
checkman
rc=$?
check "check-man: a matching page passes (--help/--version may be absent)" \
	sh -c "[ $rc -eq 0 ] && grep -q '^ok .*tfk-fake: OPTIONS matches --help (2 options)' '$T/cm'"

page .TP '.B \-\-count' .TP '.B \-\-dry-run' .TP '.B \-\-help' .TP '.B \-\-version'
checkman
rc=$?
check "check-man: plain '-' inside a name and listed --help/--version pass" \
	sh -c "[ $rc -eq 0 ]"

page .TP '.B \-\-count' .TP '.B \-\-verbose'
checkman
rc=$?
check "check-man: a missing and an extra option fail, both named" \
	sh -c "[ $rc -eq 1 ] && grep -q '^not ok .*tfk-fake: OPTIONS' '$T/cm' &&
	       grep -qF 'in --help, not in the page: --dry-run' '$T/cm' &&
	       grep -qF 'in the page, not in --help: --verbose' '$T/cm'"

page .TP '.B \-\-count' .TP '.B \-\-dry\-run'
sed -i '/^\.SH ENVIRONMENT/,/^None/d' "$T/man/tfk-fake.1"
checkman
rc=$?
check "check-man: a missing section fails" \
	sh -c "[ $rc -eq 1 ] && grep -qF 'no section ENVIRONMENT' '$T/cm'"

page .TP '.B \-\-count' .TP '.B \-\-dry\-run'
touch "$T/man/tfk-orphan.1"
checkman
rc=$?
check "check-man: a page without a tool fails" \
	sh -c "[ $rc -eq 1 ] && grep -qF 'tfk-orphan.1 has no' '$T/cm'"
rm -f "$T/man/tfk-orphan.1"

rm -f "$T/man/tfk-fake.1"
checkman
rc=$?
check "check-man: a tool without a page fails" \
	sh -c "[ $rc -eq 1 ] && grep -q '^not ok .*tfk-fake.1 missing' '$T/cm'"

# a tool with subcommands: their options count too
sed -i 's/^a fake tool$/a fake tool\n\nCommands:\n  show    show one/' "$T/bin/tfk-fake"
page .TP '.B \-\-count' .TP '.B \-\-dry\-run'
checkman
rc=$?
check "check-man: subcommand options are required in the page" \
	sh -c "[ $rc -eq 1 ] && grep -qF 'in --help, not in the page: --signature' '$T/cm'"
page .TP '.B \-\-count' .TP '.B \-\-dry\-run' .TP '.B \-\-signature'
checkman
rc=$?
check "check-man: and then pass" sh -c "[ $rc -eq 0 ]"

done_testing

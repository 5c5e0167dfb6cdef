# serve-lib.sh - shared by the tfk-serve tests (sourced after lib.sh).
#
#   wait_for CMD...   retry CMD (quietly) for up to 20 s
#   serve_wait LOG    after starting tfk-serve with --rest_api_port 0
#                     --port 0 2>LOG: a check that it logs its REST port;
#                     sets PORT and U (http://127.0.0.1:PORT/v1/models)
#   $Q METHOD PATH [BODY]   "BODY CODE" of a request to $U$PATH
#   err NAME CODE MESSAGE-PART METHOD PATH [BODY]   a TF Serving error
#                     answer: {"error": ...MESSAGE-PART...} with CODE
#   serve_stop LOG    at exit: stop the server ($PID); when a check
#                     failed, show LOG (its last 40 lines, as TAP
#                     comments: a server that died says why, e.g. a
#                     sanitizer's report)
# The port comes from the server's "REST API listening on port N" line:
# no race for a free port.

wait_for() {
	_i=0
	while [ $_i -lt 100 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
		_i=$((_i + 1))
	done
	return 1
}

serve_stop() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null
	if [ "$_fail" -gt 0 ] && [ -f "$1" ]; then
		echo "# $1, the last lines:"
		tail -n 40 "$1" | sed 's/^/#   /'
	fi
	rm -rf "$T"
}

serve_wait() {
	check "the server logs its port" wait_for grep -q \
		"REST API listening on port" "$1"
	PORT=$(sed -n 's/.*REST API listening on port \([0-9]*\).*/\1/p' "$1")
	U=http://127.0.0.1:$PORT/v1/models
	export PORT U
}

cat >"$T/q" <<'EOF'
#!/bin/sh
if [ $# -ge 3 ]; then
	curl -s -X "$1" --data-binary "$3" -w ' %{http_code}' "$U$2"
else
	curl -s -X "$1" -w ' %{http_code}' "$U$2"
fi
EOF
chmod +x "$T/q"
Q=$T/q

err() {
	_name=$1 _code=$2 _msg=$3
	shift 3
	_out=$($Q "$@")
	case $_out in
	'{"error":'*"$_msg"*"} $_code") _result pass "$_name" ;;
	*) _result fail "$_name"; echo "#   got: $_out" ;;
	esac
}

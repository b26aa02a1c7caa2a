#!/bin/sh
# tests/clickhouse-server.sh start DIR | stop DIR: a throw-away ClickHouse
# server (Debian's clickhouse-server) for the store's tests and benches.
#
#   start DIR  makes DIR (which must not exist or be empty) with a config
#              listening on 127.0.0.1 only, on two free ports, its data, logs
#              and temporary files inside DIR; starts the server in the
#              background, waits until its HTTP interface answers (up to
#              60 s) and prints its URL, http://127.0.0.1:PORT.  Users:
#              default (empty password, may write) and reader (read-only).
#              Exit 77 with the reason when clickhouse-server is not
#              installed, 1 when it does not start (its log's tail said).
#   stop DIR   stops the server started in DIR (its pid in DIR/pid), waits
#              for it to end and removes DIR.
set -u

die() {
	echo "clickhouse-server.sh: $*" >&2
	exit "${2:-1}"
}

# A free TCP port on 127.0.0.1 (as the system gives one): the server may
# still lose a race for it, and start() then tries other ports.
free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# The HTTP interface answers (a query, not only the port open).
answers() {
	[ "$(curl -s --max-time 2 "http://127.0.0.1:$1/?query=SELECT%201" 2>/dev/null)" = 1 ]
}

write_config() { # DIR HTTP_PORT TCP_PORT
	cat >"$1/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
    <logger>
        <level>warning</level>
        <log>$1/log/server.log</log>
        <errorlog>$1/log/server.err.log</errorlog>
        <size>10M</size>
        <count>1</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <http_port>$2</http_port>
    <tcp_port>$3</tcp_port>
    <max_connections>256</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>64</max_concurrent_queries>
    <uncompressed_cache_size>268435456</uncompressed_cache_size>
    <mark_cache_size>268435456</mark_cache_size>
    <path>$1/data/</path>
    <tmp_path>$1/tmp/</tmp_path>
    <user_files_path>$1/user_files/</user_files_path>
    <format_schema_path>$1/format_schemas/</format_schema_path>
    <users_config>users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
</yandex>
XML
	cat >"$1/users.xml" <<'XML'
<?xml version="1.0"?>
<yandex>
    <profiles>
        <default>
            <max_memory_usage>4000000000</max_memory_usage>
        </default>
        <readonly>
            <readonly>1</readonly>
        </readonly>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>127.0.0.1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
        <reader>
            <password></password>
            <networks><ip>127.0.0.1</ip></networks>
            <profile>readonly</profile>
            <quota>default</quota>
        </reader>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
XML
}

start() {
	dir=$1
	command -v clickhouse-server >/dev/null 2>&1 ||
		die "clickhouse-server is not installed (Debian: apt-get install clickhouse-server)" 77
	command -v curl >/dev/null 2>&1 || die "curl is not installed" 77
	command -v python3 >/dev/null 2>&1 || die "python3 is not installed" 77
	if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
		die "$dir is not empty"
	fi
	mkdir -p "$dir" || die "cannot make $dir"
	dir=$(cd "$dir" && pwd)
	mkdir -p "$dir/log" "$dir/data" "$dir/tmp" "$dir/user_files" "$dir/format_schemas"
	tries=0
	while [ $tries -lt 3 ]; do
		tries=$((tries + 1))
		http=$(free_port) && tcp=$(free_port) || die "cannot find a free port"
		[ "$http" = "$tcp" ] && continue
		write_config "$dir" "$http" "$tcp"
		# (its own session: a terminal's signals are not the server's)
		clickhouse-server --config-file="$dir/config.xml" >"$dir/log/stdout" 2>&1 </dev/null &
		pid=$!
		echo "$pid" >"$dir/pid"
		n=0
		while [ $n -lt 600 ]; do
			if answers "$http"; then
				echo "$http" >"$dir/port"
				echo "http://127.0.0.1:$http"
				return 0
			fi
			kill -0 "$pid" 2>/dev/null || break
			n=$((n + 1))
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			kill -9 "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			tail -5 "$dir/log/server.err.log" "$dir/log/stdout" >&2 2>/dev/null
			die "the server did not answer within 60 s"
		fi
		wait "$pid" 2>/dev/null
		# a port lost to another process: try others
		grep -q -i 'address already in use' "$dir/log/server.err.log" "$dir/log/stdout" 2>/dev/null &&
			continue
		tail -5 "$dir/log/server.err.log" "$dir/log/stdout" >&2 2>/dev/null
		die "the server ended as it started"
	done
	die "no free ports found in 3 tries"
}

stop() {
	dir=$1
	[ -f "$dir/pid" ] || die "no server started in $dir"
	pid=$(cat "$dir/pid")
	if kill "$pid" 2>/dev/null; then
		n=0
		while kill -0 "$pid" 2>/dev/null && [ $n -lt 300 ]; do
			n=$((n + 1))
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
	fi
	rm -rf "$dir"
}

case ${1:-} in
start) [ $# = 2 ] || die "usage: $0 start DIR" 2; start "$2" ;;
stop) [ $# = 2 ] || die "usage: $0 stop DIR" 2; stop "$2" ;;
*) die "usage: $0 start DIR | stop DIR" 2 ;;
esac

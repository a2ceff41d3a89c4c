# bash completion for the bbrkit tools. make install puts this one file in
# PREFIX/share/bash-completion/completions under each tool's name; it completes
# the tool it was loaded as.
#
# Options and commands are read from the tool's own --help (and COMMAND --help)
# at each completion, so they are always those of the installed version.
# _bbrkit_options is the one reading of --help: tests/bats/install.bats holds
# the man pages to it too.

# PREFIX, when this file is installed: PREFIX/share/bash-completion/completions/NAME
_bbrkit_prefix=${BASH_SOURCE[0]%/share/bash-completion/completions/*}

# the tool to ask: as typed, else found on PATH, else in this file's PREFIX
# (its sbin is often not on a user's PATH: `sudo bbrtrace ...`)
_bbrkit_tool() {
	local d
	if [[ $1 == */* ]] || type -P "$1" >/dev/null; then
		printf '%s\n' "$1"
		return 0
	fi
	for d in "$_bbrkit_prefix/sbin" "$_bbrkit_prefix/bin"; do
		[[ -x $d/$1 ]] && { printf '%s\n' "$d/$1"; return 0; }
	done
	return 1
}

# the options TOOL [COMMAND] --help lists: those in its usage lines (and a
# usage line's continuation, which starts with an option), in every
# column that starts with a dash on a line that starts with one, and after
# "options:" ("Other options: -h, --help; --version")
_bbrkit_options() {
	"$@" --help 2>/dev/null | awk -v tool="${1##*/}" '
		function dashed(s,   n, w, i) {
			n = split(s, w, /[][ ,\/|();=]+/)
			for (i = 1; i <= n; i++)
				if (w[i] ~ /^--?[A-Za-z0-9][A-Za-z0-9-]*$/)
					print w[i]
		}
		/^Usage:/ || (usage && ($1 == tool || $1 ~ /^-/)) { usage = 1; dashed($0); next }
		{ usage = 0 }
		/^[ \t]*-/ {
			n = split($0, col, /  +/)
			for (i = 1; i <= n; i++)
				if (col[i] ~ /^[ \t]*-/)
					dashed(col[i])
			next
		}
		tolower($0) ~ /options:/ { dashed(substr($0, index(tolower($0), "options:") + 8)) }
	' | sort -u
}

# the commands TOOL --help lists: the word after the tool's name in its usage
# lines ("[run]" too; a line that starts with an option continues the one
# before), and the first word of each line under "Commands:"
_bbrkit_commands() {
	"$1" --help 2>/dev/null | awk -v tool="${1##*/}" '
		function command(w) {
			gsub(/[][]/, "", w)
			if (w ~ /^[a-z][a-z-]*$/)
				print w
		}
		/^Usage:/ { usage = 1; command($3); next }
		usage && $1 == tool { command($2); next }
		usage && $1 ~ /^-/ { next }
		{ usage = 0 }
		/^Commands:/ { commands = 1; next }
		/^$/ { commands = 0 }
		commands && /^  [a-z]/ { command($1) }
	' | sort -u
}

_bbrkit() {
	local cur prev words cword tool commands command= i
	_init_completion || return
	tool=$(_bbrkit_tool "${words[0]}") || return
	commands=$(_bbrkit_commands "$tool")
	for ((i = 1; i < cword; i++)); do
		if [[ $'\n'$commands$'\n' == *$'\n'"${words[i]}"$'\n'* ]]; then
			command=${words[i]}
			break
		fi
	done
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_bbrkit_options "$tool" ${command:+"$command"})" -- "$cur"))
	elif [[ -z $command && -n $commands ]]; then
		COMPREPLY=($(compgen -W "$commands" -- "$cur"))
	else
		_filedir
	fi
}

complete -F _bbrkit "${BASH_SOURCE[0]##*/}"

#!/usr/bin/env bash
# `npm test` as run by someone who already uses svc: HOME holds a config with
# several profiles and a compile cache. Passes when the tests pass and leave
# that HOME byte-identical: every file, directory and link with its content,
# mode, owner and modification time. Arguments go to vitest.
#   bash scripts/check-hermetic.sh
set -euo pipefail
cd "$(dirname "$0")/.."

home=$(mktemp -d)
npm_own=$(mktemp -d)
trap 'rm -rf "$home" "$npm_own"' EXIT

mkdir -p "$home/.config/svc" "$home/.cache/svc/compile-cache"
chmod 700 "$home/.config/svc" "$home/.cache/svc" "$home/.cache/svc/compile-cache"
cat >"$home/.config/svc/config.json" <<'EOF'
{
	"profiles": {
		"default": {
			"apiKey": "sk_a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0a1b2",
			"keyExpiry": {
				"hint": "sk_a1b2…a1b2",
				"id": "key_0123456789abcdef",
				"expiresAt": "2030-01-01T00:00:00.000Z"
			}
		},
		"work": {
			"apiKey": "sk_f0e1d2c3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a5968778695a4b3c2d1e0f",
			"baseUrl": "http://127.0.0.1:9"
		},
		"staging": {
			"baseUrl": "https://staging.example.invalid"
		}
	}
}
EOF
chmod 600 "$home/.config/svc/config.json"

snapshot() {
  (cd "$home" && find . -printf '%p %y %m %U %s %T@ %l\n' && find . -type f -exec sha256sum {} +) | sort
}
before=$(snapshot)

# Only svc's variables and HOME say where svc's files are. The npm that runs
# the tests would make its cache directory and log in HOME/.npm and check for
# updates: that is npm's doing, not the tests'. (The tests' own npm and npx
# get a home of their own, test/setup/global.ts.)
status=0
env -u XDG_CONFIG_HOME -u XDG_CACHE_HOME -u XDG_DATA_HOME -u XDG_STATE_HOME -u SVC_CONFIG_DIR -u NODE_COMPILE_CACHE \
  HOME="$home" npm_config_cache="$npm_own/cache" npm_config_logs_dir="$npm_own/logs" npm_config_update_notifier=false \
  npm test -- "$@" || status=$?

if ! changes=$(diff <(echo "$before") <(snapshot)); then
  echo "check-hermetic: npm test changed $home:" >&2
  echo "$changes" >&2
  exit 1
fi
if ((status != 0)); then
  echo "check-hermetic: npm test failed (exit $status); the home was left as it was" >&2
  exit "$status"
fi
echo "check-hermetic: npm test passed and left a home with a svc config of three profiles byte-identical"

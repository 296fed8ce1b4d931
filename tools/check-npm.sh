#!/bin/sh
# npm's preinstall hook: relabel installs with `npm ci` from package-lock.json
# (lockfileVersion 3), which npm 7 and later read; older npm and other package
# managers would install other versions than the locked ones.
agent=${npm_config_user_agent:-}
client=${agent%% *}
client=${client:-an unknown client}
case $agent in
  npm/[0-6].*)
    echo "relabel: npm >= 7 is needed to install from package-lock.json; this is $client. Update npm (npm install -g npm@latest), then run npm ci." >&2
    exit 1
    ;;
  npm/*) ;;
  *)
    echo "relabel: install with npm (npm ci), which honours package-lock.json; this is $client." >&2
    exit 1
    ;;
esac

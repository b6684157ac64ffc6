#!/usr/bin/env bash
# The Action's run step (action.yml): `kubeproof run` with the inputs, its
# exit code kept as the step output exit-code (the action's last step fails
# the job with it, after the reports are uploaded).
#
# ARGS are more arguments for run as a shell would split them: quotes keep
# spaces (--label-filter "spec:podflow-create || spec:kubelet-probes"), a backslash escapes, lines
# are separated like spaces, and nothing is expanded ($VAR, *, ~): xargs's
# quoting, without a shell's eval.
set -uo pipefail

: "${PROVIDER:?}" "${REPORT_DIR:?}" "${GITHUB_OUTPUT:?}"
args=(run --provider "$PROVIDER" --report-dir "$REPORT_DIR")
if [ -n "${K8S:-}" ]; then args+=(--kubernetes-version "$K8S"); fi
if [ -n "${ARGS:-}" ]; then
  if ! mapfile -d '' -t extra < <(xargs -r printf '%s\0' <<<"$ARGS") || ! wait $!; then
    echo "::error::args: unbalanced quotes in: $ARGS"
    echo "exit-code=2" >>"$GITHUB_OUTPUT"
    exit 0
  fi
  args+=("${extra[@]}")
fi
kp=$(command -v kubeproof) || { echo "::error::kubeproof is not on PATH: the install step did not run"; echo "exit-code=5" >>"$GITHUB_OUTPUT"; exit 0; }

# The local and kind providers need root; GitHub's runners run as a user
# with passwordless sudo. sudo's secure_path would replace PATH (and with
# it the Go of actions/setup-go, which kubeproof builds Kubernetes with):
# env sets it again inside. The job summary is the action's to write,
# after the upload (with the artifact's link): run does not get it.
cmd=(env -u GITHUB_STEP_SUMMARY "$kp" "${args[@]}")
if [ "$PROVIDER" != kubeconfig ] && [ "$(id -u)" -ne 0 ]; then
  keep=HOME,KUBECONFIG,KUBEPROOF_CACHE_DIR,DOCKER_HOST,NO_COLOR,GITHUB_ACTIONS,GITHUB_SERVER_URL,GITHUB_REPOSITORY,GITHUB_RUN_ID
  cmd=(sudo "--preserve-env=$keep" env "PATH=$PATH" "$kp" "${args[@]}")
fi
printf 'kubeproof:'
printf ' %q' "${args[@]}"
printf '\n'
code=0
"${cmd[@]}" || code=$?
echo "exit-code=$code" >>"$GITHUB_OUTPUT"
echo "kubeproof run exited $code (kubeproof help exit-codes)"

#!/bin/sh
# Re-records cassettes/recorded/ from a local SmolLM2-135M served by llama-cpp-python
# (see cassettes/README.md for the server command). Dev-time only: tests never run it.
set -e
cd "$(dirname "$0")/.."
URL=${OPENAI_BASE_URL:-http://127.0.0.1:8765/v1}
M=smollm2-135m-instruct-q4_1
for S in "" "--stream"; do
  SUF=$( [ -n "$S" ] && echo _stream || echo "" )
  harness record --scenario scenarios/discovery/seed_average_spend.yaml --base-url $URL --model $M \
    --string-content $S --tool-choice 'search_customer,customer_*_get_average_spend,none' \
    -o cassettes/recorded/entity_discovery$SUF.yaml
  harness record --scenario scenarios/unfolding/plain_facade.yaml --base-url $URL --model $M \
    --string-content $S --tool-choice 'workspace,read_file,none' \
    -o cassettes/recorded/unfolding_facade$SUF.yaml
  harness record --scenario scenarios/playbook/hidden_research.yaml --base-url $URL --model $M \
    --string-content $S --tool-choice 'fetch_paper,fetch_paper,fetch_paper,none' \
    -o cassettes/recorded/playbook$SUF.yaml
done
harness record --scenario scenarios/sessions/react_forced_actions.yaml --base-url $URL --model $M \
  --string-content -o cassettes/recorded/sessions/react_none_then_forced.yaml

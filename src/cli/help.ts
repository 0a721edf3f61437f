/** The text of `loopgate --help`; the README's command reference mirrors it. */
export const HELP = `loopgate — the model may suggest it finished; only external evidence may declare DONE.

Usage:
  loopgate run TASK (--model PROVIDER:MODEL | --builder CMD | --oracle | --noop) [options]
      Run a builder on a task until its held-out gates pass or the attempt cap is reached.
      --model runs loopgate's own agent: anthropic:MODEL, openai:MODEL, openai-compatible:MODEL,
      scripted:FILE, replay:FILE. CMD is an argv line (no shell) with {prompt}, {prompt_file},
      {required_fix}, {workspace}.
  loopgate run --case FILE (--model PROVIDER:MODEL | --builder CMD | --noop) [--workspace DIR] [options]
      Run a mission fixture (prompt, goal, files, artifacts, preserve): files are the starting workspace,
      each artifact's expected JSON is a gate the builder never sees, preserved files are protected.
      --workspace DIR: DIR must hold exactly the listed files (it is checked, never changed).
  loopgate resume RUN [--store DIR] [--json]
      Continue an interrupted run from its log; calls left in doubt are never silently re-run.
  loopgate verify TASK --workspace DIR [--json]
      Check work produced elsewhere: DIR is gated as the builder's result, in one attempt.
  loopgate task check TASK [--json]
      The oracle must reach SUCCESS and the no-op builder must not; otherwise the gates do not discriminate.
  loopgate runs [--store DIR] [--limit N] [--json]      Recent runs, one line each.
  loopgate status RUN [--store DIR] [--json]            One run's envelope.
  loopgate events RUN [--store DIR] [--json]            One run's audit trail.
  loopgate health [--store DIR] [--days N] [--json]     Plan-step counters: completions, null steps, reopens.
  loopgate demo [--store DIR] [--json]                  Run the bundled examples with honest and forging builders.
  loopgate doctor [--store DIR] [--json]
      Check what loopgate relies on (Node, bubblewrap and its self-test, git, python3, the store, provider
      settings, claude/codex), each with its fix: exit 0 all good, 1 something optional missing, 2 required.
  loopgate selftest [--json]
      Measure this installation (contracts, sandbox and store, an end-to-end run, cost policy, a live
      provider if configured, documentation): exit 0 READY, 1 READY_WITH_CAVEATS, 2 NOT_READY.
  loopgate exp run MANIFEST [--json] [--out FILE] [--store DIR]
      Run an experiment: arms × tasks × seeds, each run with its own store; counts per arm (execution
      failures apart from graded ones) and outcomes paired by (task, seed) against the control arm.
      Exit 0 when it completed, whatever the outcomes.

Options:
  --json                 print only the envelope (or the command's result) as JSON on stdout
  --out FILE             exp: also write the experiment's JSON export to FILE
  --store DIR            where the event log lives (default: .loopgate/ beside the task; for runs/status/events:
                         $LOOPGATE_STORE or ./.loopgate)
  --builder-env NAME     let the caller's variable NAME reach the builder (repeatable); nothing else passes
  --builder-mount PATH   mount PATH read-only in the builder's sandbox (repeatable), e.g. the agent's install
  --network              allow the builder network access (external agents need their API)
  --case FILE            run: a mission fixture instead of TASK
  --max-attempts N       override the task's budget.attempts
  --max-turns N          built-in agent: turns per attempt (overrides budget.turns)
  --max-cost USD         built-in agent: run-wide cost cap (overrides budget.cost_usd)
  --record FILE          built-in agent: save the model's responses as a replayable scripted file
  --base-url URL         built-in agent: the server of an openai-compatible model
  --no-step-checks       built-in agent: do not execute the checks plan steps declare (they stay unverified)
  --step-escalation SPEC built-in agent: consult this model (same forms as --model) about steps that trip an escalation trigger
  --days N               health: only runs started in the last N days
  --judge-model SPEC     the judge's model (same forms as --model); overrides the task's judge.model
  --unsafe-no-sandbox    run builders and gates without bubblewrap; recorded in the envelope
  -h, --help             this text;  --version  the version

Exit codes: 0 SUCCESS, 1 ESCALATED, 2 TOOL_FAILURE or bad input.
`;

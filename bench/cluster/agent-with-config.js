#!/usr/bin/env node
// For experiments (REGISTRY_CLUSTER_BIN=bench/cluster/agent-with-config.js): runs the registry CLI
// with `-config-file $BENCH_AGENT_CONFIG` added to an `agent` command, e.g. a config with
// {"raft": {"snapshot_threshold": 1000000}} to see what snapshots cost a write load.
'use strict';
const { join } = require('node:path');

if (process.env.BENCH_AGENT_CONFIG && process.argv[2] === 'agent') process.argv.push('-config-file', process.env.BENCH_AGENT_CONFIG);
require(join(__dirname, '..', '..', 'packages', 'cli', 'bin', 'registry.js'));

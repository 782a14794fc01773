// The user's docker-compose scenario, run for real by scripts/compose-test.sh: the repo's
// docker-compose.yml on Debian's docker.io and docker-compose, in a network namespace and a
// dockerd of the script's own (see the script's header and docs/cluster.md, "Docker Compose in
// CI"). This test only runs it and reads its outcome, so that CI counts it like every other test.
// It needs root and apt (the script installs docker.io, docker-compose and debootstrap);
// elsewhere it is skipped with the reason printed.
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO } from '../support/processes';

const SCRIPT = join(REPO, 'scripts/compose-test.sh');
// From nothing (apt, debootstrap, the npm cache, the build on a loaded 2-core machine) the script
// can take ~25 min; its scenario is bounded at 10 min by the script itself.
const TEST_MS = 45 * 60_000;
const STOP_AT_MS = TEST_MS - 3 * 60_000; // then SIGTERM: the script's trap removes what it made

function missing(): string | undefined {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'needs root (a network namespace and a dockerd of its own)';
  const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
  if (!has('apt-get') && !['dockerd', 'docker-compose', 'debootstrap'].every(has)) {
    return 'no apt-get to install docker.io, docker-compose and debootstrap';
  }
  return undefined;
}

const reason = missing();
if (reason) console.log(`SKIPPED: the docker-compose scenario: ${reason}`);
const composeTest = reason ? test.skip : test;

composeTest(
  'docker-compose: five healthy, SIGKILL and stop of the leader, server2 replaced with an empty volume, down -v',
  async () => {
    let output = '';
    const child = spawn('bash', [SCRIPT], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (d: Buffer) => {
      output += d.toString();
      process.stdout.write(d); // progress in CI's log as it happens
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const stop = setTimeout(() => child.kill('SIGTERM'), STOP_AT_MS);
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    clearTimeout(stop);
    if (code !== 0) throw new Error(`scripts/compose-test.sh exited ${code}:\n${output.split('\n').slice(-150).join('\n')}`);
    // Every step of the scenario reported, in order.
    const steps = [
      'all five containers healthy',
      'a write through each of the five containers, applied on all three servers',
      'after SIGKILL',
      'started again and caught up',
      'handover to',
      'during the replacement, all answered',
      'list-peers shows three voters',
      'docker-compose down -v',
      'PASSED',
    ];
    let at = 0;
    for (const s of steps) {
      const i = output.indexOf(s, at);
      expect(i >= 0 ? s : `missing (in order): ${s}`).toBe(s);
      at = i;
    }
  },
  TEST_MS,
);

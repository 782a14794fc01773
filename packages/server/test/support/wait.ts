// Waiting in tests: bounded polls, never open-ended sleeps.

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Poll `cond` every `stepMs` until it holds (true) or `timeoutMs` passes (false); errors count as "not yet". */
export async function eventually(cond: () => Promise<boolean> | boolean, timeoutMs: number, stepMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if (await cond()) return true;
    } catch {
      // a server may be restarting or cut off
    }
    await sleep(stepMs);
  }
  return false;
}

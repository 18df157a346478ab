// Polling a node without piling requests on it: the next read is scheduled only when the
// last one has ended (a slow node never has two reads of the same page under way), and a read
// that fails puts the next one further off, doubling up to a bound, back to the usual pace
// once a read succeeds.

/** nextDelay is the wait before the next read: every after a read that succeeded, else the
 * last wait doubled, at most max. */
export function nextDelay(last, ok, every, max) {
  return ok ? every : Math.min(Math.max(last, every) * 2, max);
}

/** poll runs read (async, resolving to whether it succeeded; a throw counts as a failure)
 * every ms after each read ends, backing off on failures up to max ms, until signal aborts.
 * While skip() says so (the tab is hidden) it does not read, and waits every ms. onWait(ms,
 * ok) is told each wait. The first read is the caller's: poll waits before its first. */
export function poll(read, { every, max = every * 12, signal, skip = () => false, onWait = () => {} }) {
  let delay = every;
  let timer;
  const tick = async () => {
    if (signal?.aborted) return;
    let ok = true;
    if (!skip()) {
      try {
        ok = (await read()) !== false;
      } catch {
        ok = false;
      }
    }
    if (signal?.aborted) return;
    delay = nextDelay(delay, ok, every, max);
    onWait(delay, ok);
    timer = setTimeout(tick, delay);
  };
  timer = setTimeout(tick, every);
  signal?.addEventListener('abort', () => clearTimeout(timer));
}

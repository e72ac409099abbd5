// A lock contender as a process of its own (tests/locks-processes.test.ts SIGSTOPs it): takes the lock, writes to
// the fenced resource with its fencing token, releases; prints one JSON line per round.
//   node lock-contender.js <gateway url> <resource url> <lock name> <rounds> <ttl ms>
const [gateway, resource, name, rounds, ttl] = process.argv.slice(2);

const post = async (url, body) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
};

async function main() {
  for (let i = 0; i < Number(rounds); i++) {
    const grant = await post(`${gateway}/store/locks/${name}/acquire`, {
      ttl_ms: Number(ttl),
      wait_ms: 30_000,
    });
    if (grant.status !== 200) {
      console.log(JSON.stringify({ error: grant.status, body: grant.body }));
      continue;
    }
    const { fence, token } = grant.body;
    const write = await post(resource, { fence, pid: process.pid });
    const release = await post(`${gateway}/store/locks/${name}/release`, { token });
    console.log(JSON.stringify({ fence, accepted: write.body.accepted, released: release.status }));
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);

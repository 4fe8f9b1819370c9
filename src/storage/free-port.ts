// TCP ports on 127.0.0.1 that are free right now (the embedded PostgreSQL, and the test and bench child processes).
import net from 'node:net';

export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}

/**
 * `count` different free ports: each held open until all are taken, then released. Asked for one at a time, the
 * system may hand out the same port twice (it was free again once the first listener closed), and a process given
 * it for two listeners fails to start (EADDRINUSE).
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => net.createServer());
  try {
    return await Promise.all(
      servers.map(
        (server) =>
          new Promise<number>((resolve, reject) => {
            server.unref();
            server.on('error', reject);
            server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port));
          }),
      ),
    );
  } finally {
    await Promise.all(
      servers.map(
        (server) => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve())),
      ),
    );
  }
}

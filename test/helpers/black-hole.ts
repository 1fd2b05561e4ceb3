/** A proxy that passes requests on to a server and never passes an answer back: a lost reply. */
import { connect, createServer, type Server } from 'node:net';

export function blackHole(target: string): Promise<{ url: string; server: Server }> {
  const { hostname, port } = new URL(target);
  const server = createServer((socket) => {
    const upstream = connect(Number(port), hostname);
    socket.pipe(upstream);
    upstream.on('data', () => undefined);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server })),
  );
}

export default function (pi: any) {
  pi.on("session_start", () => undefined);
}

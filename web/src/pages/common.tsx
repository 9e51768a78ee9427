// Small pieces every page uses.

export function Loading() {
  return <p className="muted">Loading…</p>;
}

export function Failure(props: { message: string }) {
  return (
    <p role="alert" className="error">
      {props.message}
    </p>
  );
}

"use client";

/** Shown when a page fails to render: what happened, and a way to try again. */
export default function ErrorPage({
  error,
  reset,
}: {
  error: Error & { digest?: string };
  reset: () => void;
}) {
  return (
    <main className="center-page">
      <section className="card auth-card" aria-labelledby="error-title">
        <h1 id="error-title">Something went wrong</h1>
        <p className="alert alert-error" role="alert">
          {error.message || "The page could not be shown."}
          {error.digest ? ` (reference ${error.digest})` : null}
        </p>
        <button type="button" className="button button-primary" onClick={reset}>
          Try again
        </button>
      </section>
    </main>
  );
}

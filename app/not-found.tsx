import Link from "next/link";

export default function NotFound() {
  return (
    <main className="center-page">
      <section className="card auth-card" aria-labelledby="not-found-title">
        <h1 id="not-found-title">Page not found</h1>
        <p>There is nothing here, or you do not have access to it.</p>
        <Link className="button" href="/">
          Go to your home page
        </Link>
      </section>
    </main>
  );
}

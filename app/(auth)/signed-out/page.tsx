import type { Metadata } from "next";
import Link from "next/link";

export const metadata: Metadata = { title: "Signed out" };

export default function SignedOutPage() {
  return (
    <main className="center-page">
      <section className="card auth-card" aria-labelledby="signed-out-title">
        <h1 id="signed-out-title">You have signed out</h1>
        <p>Your Ring0 session and your identity provider session have ended.</p>
        <Link className="button button-primary" href="/signin">
          Sign in again
        </Link>
      </section>
    </main>
  );
}

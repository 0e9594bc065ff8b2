"use client";

import { useMutation } from "@tanstack/react-query";
import { useTRPC } from "@/components/trpc/client";

/** Saves a string as a file, as the browser's download. */
function saveFile(filename: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: "application/yaml" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * "Download kubeconfig" for what `owner` shares: each click issues a new API token of yours (for
 * your own tenant) in a kubeconfig whose one context, `<owner>-shared`, points at the owner through
 * Ring0's gateway; the gateway lets it do only what the grants allow.
 */
export function SharedKubeconfigButton({ owner, namespace }: { owner: string; namespace?: string }) {
  const trpc = useTRPC();
  const issue = useMutation(
    trpc.sharedWithMe.kubeconfig.mutationOptions({
      onSuccess: (file) => saveFile(file.filename, file.kubeconfig),
    }),
  );
  const filename = `${owner}-shared.kubeconfig`;
  return (
    <div>
      <button
        type="button"
        className="button button-primary"
        data-testid={`shared-kubeconfig-${owner}`}
        disabled={issue.isPending}
        onClick={() => issue.mutate({ owner })}
      >
        {issue.isPending ? "Issuing…" : "Download kubeconfig"}
      </button>
      {issue.error ? (
        <p className="alert alert-error" role="alert">
          {issue.error.message}
        </p>
      ) : null}
      <p>
        Each download holds a new API token of yours (see API tokens to revoke it); kubectl can do with it
        only what is shared here:
      </p>
      <pre>
        <code>
          kubectl --kubeconfig {filename} get pods -n {namespace ?? "<namespace>"}
        </code>
      </pre>
    </div>
  );
}

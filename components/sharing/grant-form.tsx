"use client";

import { useMutation, useSuspenseQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useTRPC } from "@/components/trpc/client";
import { toast } from "@/components/ui/toast";
import type { GrantSummary } from "@/server/sharing/resources";
import { fromLocalInput, rulePresets, splitList, toLocalInput } from "./grant-text";
import styles from "./sharing.module.css";

const verbs = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"] as const;
const roleGroups = ["admins", "members", "viewers"] as const;

interface GranteeFields {
  tenant: string;
  users: string;
  groups: string[];
}

interface RuleFields {
  namespaces: string;
  apiGroups: string;
  resources: string;
  resourceNames: string;
  verbs: string[];
}

const emptyGrantee = (): GranteeFields => ({ tenant: "", users: "", groups: [] });
const presetRule = (
  namespaces: string,
  rule: { apiGroups: readonly string[]; resources: readonly string[]; verbs: readonly string[] },
): RuleFields => ({
  namespaces,
  apiGroups: rule.apiGroups.map((group) => group || "core").join(", "),
  resources: rule.resources.join(", "),
  resourceNames: "",
  verbs: [...rule.verbs],
});
const emptyRule = (): RuleFields => presetRule("", rulePresets[0].rules[0]);

/** API groups as typed: "core" or an empty field means the core group (""). */
function apiGroupsFrom(text: string): string[] {
  const groups = splitList(text).map((group) => (group === "core" ? "" : group));
  return groups.length ? groups : [""];
}

const toggled = (list: readonly string[], item: string, on: boolean) =>
  on ? [...new Set([...list, item])] : list.filter((other) => other !== item);

/**
 * Creates a grant, or edits one (`initial`). The server checks it against the operator policy and
 * its refusal, naming each rule broken, is shown verbatim beside the form.
 */
export function GrantForm({
  tenant,
  initial,
  onDone,
  onCancel,
}: {
  tenant: string;
  initial?: GrantSummary;
  onDone: (grant: GrantSummary) => void;
  onCancel?: () => void;
}) {
  const trpc = useTRPC();
  const { data: policy } = useSuspenseQuery(trpc.sharing.policy.queryOptions());
  const [name, setName] = useState(initial?.shortName ?? "");
  const [grantees, setGrantees] = useState<GranteeFields[]>(
    initial?.grantees.map((grantee) => ({
      tenant: grantee.tenant,
      users: (grantee.users ?? []).join(", "),
      groups: grantee.groups ?? [],
    })) ?? [emptyGrantee()],
  );
  const [rules, setRules] = useState<RuleFields[]>(
    initial?.rules.map((rule) => ({
      namespaces: rule.namespaces.join(", "),
      apiGroups: rule.apiGroups.map((group) => group || "core").join(", "),
      resources: rule.resources.join(", "),
      resourceNames: (rule.resourceNames ?? []).join(", "),
      verbs: rule.verbs,
    })) ?? [emptyRule()],
  );
  const defaultExpiry = () =>
    new Date(Date.now() + Math.min(7, policy.maxExpiryDays ?? 7) * 86_400_000).toISOString();
  const [expiresAt, setExpiresAt] = useState(toLocalInput(initial ? initial.expiresAt : defaultExpiry()));
  const [purpose, setPurpose] = useState(initial?.purpose ?? "");

  const onSuccess = (grant: GrantSummary) => {
    toast(
      grant.state === "Active"
        ? `Grant "${grant.shortName}" is active.`
        : `Grant "${grant.shortName}" saved: ${grant.message}`,
    );
    onDone(grant);
  };
  const create = useMutation(trpc.sharing.create.mutationOptions({ onSuccess }));
  const update = useMutation(trpc.sharing.update.mutationOptions({ onSuccess }));
  const pending = create.isPending || update.isPending;
  const failure = create.error ?? update.error;

  const setGrantee = (index: number, change: Partial<GranteeFields>) =>
    setGrantees((all) => all.map((grantee, at) => (at === index ? { ...grantee, ...change } : grantee)));
  const setRule = (index: number, change: Partial<RuleFields>) =>
    setRules((all) => all.map((rule, at) => (at === index ? { ...rule, ...change } : rule)));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const body = {
      tenant,
      grantees: grantees.map((grantee) => ({
        tenant: grantee.tenant.trim(),
        users: splitList(grantee.users),
        groups: grantee.groups,
      })),
      rules: rules.map((rule) => ({
        namespaces: splitList(rule.namespaces),
        apiGroups: apiGroupsFrom(rule.apiGroups),
        resources: splitList(rule.resources),
        resourceNames: splitList(rule.resourceNames),
        verbs: rule.verbs,
      })),
      expiresAt: fromLocalInput(expiresAt),
      purpose,
    };
    if (initial) {
      update.mutate({
        ...body,
        name: initial.shortName,
        resourceVersion: initial.resourceVersion ?? undefined,
      });
    } else {
      create.mutate({ ...body, name });
    }
  };

  const title = initial ? `Edit grant ${initial.shortName}` : "New grant";
  return (
    <form className={`card ${styles.form}`} onSubmit={submit} aria-label={title} data-testid="grant-form">
      <h2>{title}</h2>
      {initial ? null : (
        <label className="field">
          Name
          <input
            value={name}
            onChange={(event) => setName(event.target.value)}
            maxLength={40}
            required
            pattern="[a-z0-9]([a-z0-9\-]*[a-z0-9])?"
            title="Lowercase letters, digits and '-', up to 40 characters"
            placeholder="debug-checkout"
            data-testid="grant-name"
          />
        </label>
      )}

      <fieldset className={styles.group}>
        <legend>Who receives access</legend>
        {grantees.map((grantee, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity beyond their place
          <div className={styles.row} key={index} data-testid={`grantee-row-${index}`}>
            <label className="field">
              Tenant
              <input
                value={grantee.tenant}
                onChange={(event) => setGrantee(index, { tenant: event.target.value })}
                required
                placeholder="globex"
                data-testid={`grantee-tenant-${index}`}
              />
            </label>
            <label className="field">
              Only these users (optional)
              <input
                value={grantee.users}
                onChange={(event) => setGrantee(index, { users: event.target.value })}
                placeholder="ann, bob"
                data-testid={`grantee-users-${index}`}
              />
            </label>
            <fieldset className={styles.checks}>
              <legend>Only these role groups (optional)</legend>
              {roleGroups.map((group) => (
                <label key={group}>
                  <input
                    type="checkbox"
                    checked={grantee.groups.includes(group)}
                    onChange={(event) =>
                      setGrantee(index, { groups: toggled(grantee.groups, group, event.target.checked) })
                    }
                    data-testid={`grantee-group-${index}-${group}`}
                  />{" "}
                  {group}
                </label>
              ))}
            </fieldset>
            {grantees.length > 1 ? (
              <button
                type="button"
                className="button"
                onClick={() => setGrantees((all) => all.filter((_, at) => at !== index))}
              >
                Remove
              </button>
            ) : null}
          </div>
        ))}
        <p className={styles.hint}>
          Without users or groups, everyone in the grantee tenant receives the access.
        </p>
        <button
          type="button"
          className="button"
          onClick={() => setGrantees((all) => [...all, emptyGrantee()])}
        >
          Add a tenant
        </button>
      </fieldset>

      <fieldset className={styles.group}>
        <legend>What they may do</legend>
        {rules.map((rule, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity beyond their place
          <div className={styles.rule} key={index} data-testid={`rule-row-${index}`}>
            <div className={styles.row}>
              <label className="field">
                Namespaces
                <input
                  value={rule.namespaces}
                  onChange={(event) => setRule(index, { namespaces: event.target.value })}
                  required
                  placeholder="shared"
                  data-testid={`rule-namespaces-${index}`}
                />
              </label>
              <label className="field">
                Preset
                <select
                  value=""
                  onChange={(event) => {
                    const preset = rulePresets.find((candidate) => candidate.id === event.target.value);
                    // The preset's rules replace this row, in the same namespaces.
                    if (preset) {
                      setRules((all) => [
                        ...all.slice(0, index),
                        ...preset.rules.map((presetPart) => presetRule(rule.namespaces, presetPart)),
                        ...all.slice(index + 1),
                      ]);
                    }
                  }}
                  data-testid={`rule-preset-${index}`}
                >
                  <option value="">Choose a preset…</option>
                  {rulePresets.map((preset) => (
                    <option key={preset.id} value={preset.id}>
                      {preset.label}
                    </option>
                  ))}
                </select>
              </label>
              <label className="field">
                API groups
                <input
                  value={rule.apiGroups}
                  onChange={(event) => setRule(index, { apiGroups: event.target.value })}
                  placeholder="core, apps"
                  data-testid={`rule-api-groups-${index}`}
                />
              </label>
              <label className="field">
                Resources
                <input
                  value={rule.resources}
                  onChange={(event) => setRule(index, { resources: event.target.value })}
                  required
                  placeholder="pods, pods/log"
                  data-testid={`rule-resources-${index}`}
                />
              </label>
              <label className="field">
                Only these names (optional)
                <input
                  value={rule.resourceNames}
                  onChange={(event) => setRule(index, { resourceNames: event.target.value })}
                  data-testid={`rule-resource-names-${index}`}
                />
              </label>
            </div>
            <fieldset className={styles.checks}>
              <legend>Verbs</legend>
              {verbs.map((verb) => (
                <label key={verb}>
                  <input
                    type="checkbox"
                    checked={rule.verbs.includes(verb)}
                    onChange={(event) =>
                      setRule(index, { verbs: toggled(rule.verbs, verb, event.target.checked) })
                    }
                    data-testid={`rule-verb-${index}-${verb}`}
                  />{" "}
                  {verb}
                </label>
              ))}
            </fieldset>
            {rules.length > 1 ? (
              <button
                type="button"
                className="button"
                onClick={() => setRules((all) => all.filter((_, at) => at !== index))}
              >
                Remove rule
              </button>
            ) : null}
          </div>
        ))}
        <button type="button" className="button" onClick={() => setRules((all) => [...all, emptyRule()])}>
          Add a rule
        </button>
      </fieldset>

      <div className={styles.row}>
        <label className="field">
          Expires
          <input
            type="datetime-local"
            value={expiresAt}
            onChange={(event) => setExpiresAt(event.target.value)}
            required={policy.maxExpiryDays !== null}
            data-testid="grant-expires"
          />
          <span className={styles.hint}>
            {policy.maxExpiryDays !== null
              ? `At most ${policy.maxExpiryDays} days from now (operator policy).`
              : "Optional: without an expiry the grant lasts until revoked."}
          </span>
        </label>
        <label className={`field ${styles.wide}`}>
          Purpose
          <textarea
            value={purpose}
            onChange={(event) => setPurpose(event.target.value)}
            required
            maxLength={1024}
            rows={2}
            placeholder="Why the access is needed: shown to approvers and in the audit log"
            data-testid="grant-purpose"
          />
        </label>
      </div>

      {policy.requireApproval ? (
        <p className="alert alert-info">
          Grants need an operator's approval (again after every edit) before they work.
        </p>
      ) : null}
      <p className="toolbar">
        <button type="submit" className="button button-primary" disabled={pending} data-testid="grant-submit">
          {pending ? "Saving…" : initial ? "Save grant" : "Create grant"}
        </button>
        {onCancel ? (
          <button type="button" className="button" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
      </p>
      {failure ? (
        <p className="alert alert-error" role="alert" data-testid="grant-error">
          {failure.message}
        </p>
      ) : null}
    </form>
  );
}

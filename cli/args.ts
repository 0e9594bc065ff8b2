/**
 * The command line: which command, its arguments and options, validated (zod) with messages that
 * name the flag. Everything wrong here is a UsageError (exit 2).
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import { z } from "zod";
import { UsageError } from "./errors";
import { type OutputFormat, outputFormats } from "./output";

type OptionSpec = NonNullable<ParseArgsConfig["options"]>[string] & { help: string; value?: string };

/** Options every command takes. */
const globalOptions = {
  url: { type: "string", value: "url", help: "Ring0's URL (default: from `ring0 login`, or $RING0_URL)" },
  token: { type: "string", value: "r0_…", help: "API token (default: from `ring0 login`, or $RING0_TOKEN)" },
  output: { type: "string", short: "o", value: "json|table", help: "output format (default table)" },
  help: { type: "boolean", short: "h", help: "show help" },
} satisfies Record<string, OptionSpec>;

interface CommandSpec {
  summary: string;
  /** Positional arguments, in order; all required. */
  args: string[];
  /** Positional arguments after `args` that may be left out (the command says when one is needed). */
  optionalArgs?: string[];
  /** Any number of further positional arguments, of this form (e.g. resource=quantity). */
  rest?: string;
  options: Record<string, OptionSpec>;
  /** Replaces the global -o/--output help when the command gives it another meaning. */
  outputHelp?: string;
}

export const commands = {
  login: {
    summary: "verify an API token and store it with the URL (token from --token, $RING0_TOKEN or stdin)",
    args: [],
    options: {},
  },
  "tenants list": { summary: "list tenants (operators)", args: [], options: {} },
  "tenants create": {
    summary: "create a tenant (operators)",
    args: ["name"],
    options: {
      "display-name": { type: "string", value: "text", help: "human-readable name (required)" },
      provisioner: {
        type: "string",
        value: "local|kubernetes",
        help: "where its control plane runs (default local)",
      },
      version: { type: "string", value: "1.36", help: "Kubernetes version (default 1.36)" },
      admin: {
        type: "string",
        multiple: true,
        value: "user",
        help: "a tenant admin's username (repeatable)",
      },
    },
  },
  "tenants delete": {
    summary: "delete a tenant with its control plane and workloads (operators)",
    args: ["name"],
    options: { yes: { type: "boolean", help: "confirm the deletion (required)" } },
  },
  kubeconfig: {
    summary: "issue a kubeconfig for a tenant (a new API token reaching it through Ring0)",
    args: ["tenant"],
    options: {
      "expires-in-days": { type: "string", value: "N", help: "token lifetime in days, 1–365 (default 30)" },
    },
    outputHelp: "write the kubeconfig to this file (mode 0600) instead of stdout",
  },
  "tokens list": {
    summary: "list the API tokens you may see",
    args: [],
    options: { tenant: { type: "string", value: "tenant", help: "only this tenant's tokens" } },
  },
  "tokens revoke": { summary: "revoke an API token by id", args: ["id"], options: {} },
  "quota get": { summary: "show a tenant's quota and what it uses", args: ["tenant"], options: {} },
  "quota set": {
    summary: "set a tenant's quota from a template and/or resource=quantity limits (operators)",
    args: ["tenant"],
    rest: "resource=quantity",
    options: {
      template: {
        type: "string",
        value: "name",
        help: "copy a quota template's limits (resource=quantity entries override them)",
      },
      "allow-below-usage": {
        type: "boolean",
        help: "apply limits below what the tenant uses now (it is then over quota until usage drops)",
      },
    },
  },
  "quota default-share": {
    summary: "show or set the quota each new namespace of a tenant gets (setting: its admins and operators)",
    args: ["tenant"],
    rest: "resource=quantity",
    options: {
      clear: {
        type: "boolean",
        help: "remove the default share (new namespaces are then bounded by the tenant quota alone)",
      },
    },
  },
  "share create": {
    summary: "grant other tenants' users access to some of a tenant's resources (its admins)",
    args: ["owner-tenant", "name"],
    options: {
      to: {
        type: "string",
        multiple: true,
        value: "tenant[:user,…|@group]",
        help: "who gets access: a whole tenant, some of its users, or a role group (admins, members, viewers); repeatable",
      },
      allow: {
        type: "string",
        multiple: true,
        value: "verbs:resources",
        help: "what they may do, e.g. get,list,watch:pods,pods/log or get:widgets:example.com (<verbs>:<resources>:<apiGroup>); presets read-pods, logs, exec; repeatable",
      },
      namespace: {
        type: "string",
        short: "n",
        multiple: true,
        value: "namespace",
        help: "a namespace every --allow covers (required; repeatable)",
      },
      "resource-name": {
        type: "string",
        multiple: true,
        value: "name",
        help: "only objects of this name (repeatable; applies to every --allow)",
      },
      expires: { type: "string", value: "date-time", help: "when the grant ends, e.g. 2026-12-01T00:00:00Z" },
      for: {
        type: "string",
        value: "duration",
        help: "how long the grant lasts, e.g. 7d, 12h, 2w (instead of --expires)",
      },
      purpose: {
        type: "string",
        value: "text",
        help: "what the access is for, shown to everyone involved (required)",
      },
    },
  },
  "share list": {
    summary: "list a tenant's grants, or with --shared-with-me the grants other tenants share with you",
    args: [],
    optionalArgs: ["owner-tenant"],
    options: {
      "shared-with-me": { type: "boolean", help: "list what other tenants share with you instead" },
    },
  },
  "share revoke": {
    summary: "revoke a tenant's grant (access ends within seconds everywhere)",
    args: ["owner-tenant", "name"],
    options: {},
  },
} satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof commands;
const groups = ["tenants", "tokens", "quota", "share"] as const;

export interface GlobalFlags {
  url?: string;
  token?: string;
  output: OutputFormat;
}

export type ParsedCommandLine =
  | { kind: "help"; text: string }
  | {
      kind: "command";
      command: CommandName;
      args: Record<string, string>;
      options: Record<string, string | boolean | string[] | undefined>;
      global: GlobalFlags;
      /** `-o <file>` of commands that write a file. */
      outputFile?: string;
      /** The further positional arguments of commands that take any number (CommandSpec.rest). */
      rest?: string[];
    };

const commandNames = Object.keys(commands) as CommandName[];

function optionLines(options: Record<string, OptionSpec>): string[] {
  return Object.entries(options).map(([name, spec]) => {
    const flag = `${"short" in spec && spec.short ? `-${spec.short}, ` : "    "}--${name}${spec.value ? ` <${spec.value}>` : ""}`;
    return `  ${flag.padEnd(36)} ${spec.help}`;
  });
}

function positionalUsage(spec: CommandSpec): string[] {
  return [
    ...spec.args.map((arg) => `<${arg}>`),
    ...(spec.optionalArgs ?? []).map((arg) => `[<${arg}>]`),
    ...(spec.rest ? [`[<${spec.rest}> ...]`] : []),
  ];
}

export function helpText(command?: CommandName, group?: string): string {
  if (command) {
    const spec: CommandSpec = commands[command];
    const usage = [`ring0 ${command}`, ...positionalUsage(spec), "[options]"].join(" ");
    const globals = { ...globalOptions, output: { ...globalOptions.output } } as Record<string, OptionSpec>;
    if (spec.outputHelp)
      globals.output = { type: "string", short: "o", value: "file", help: spec.outputHelp };
    const own = optionLines(spec.options);
    return [
      `Usage: ${usage}`,
      "",
      `${spec.summary[0]!.toUpperCase()}${spec.summary.slice(1)}.`,
      ...(own.length ? ["", "Options:", ...own] : []),
      "",
      "Global options:",
      ...optionLines(globals),
      "",
    ].join("\n");
  }
  const listed = commandNames.filter((name) => !group || name.startsWith(`${group} `));
  return [
    "Usage: ring0 <command> [options]",
    "",
    "Talks to Ring0's API with an API token (`ring0 login` first).",
    "",
    "Commands:",
    ...listed.map((name) => {
      const spec: CommandSpec = commands[name];
      const args = positionalUsage(spec).join(" ");
      return `  ${`${name} ${args}`.trimEnd().padEnd(28)} ${commands[name].summary}`;
    }),
    "",
    "Global options:",
    ...optionLines(globalOptions),
    "",
    "Run `ring0 <command> --help` for a command's options.",
    "",
  ].join("\n");
}

const outputFormat = z.enum(outputFormats, {
  error: `-o/--output: expected one of ${outputFormats.join(", ")}`,
});

export function parseCommandLine(argv: readonly string[]): ParsedCommandLine {
  const allOptions: Record<string, OptionSpec> = { ...globalOptions };
  for (const spec of Object.values(commands) as CommandSpec[]) Object.assign(allOptions, spec.options);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options: allOptions, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(
      `${(error as Error).message.replace(/\. To specify a positional.*$/s, "")} (see ring0 --help)`,
    );
  }
  const { values, positionals } = parsed;
  const words = [...positionals];
  if (words[0] === "help") {
    words.shift();
    values.help = true;
  }
  if (words.length === 0) {
    if (values.help) return { kind: "help", text: helpText() };
    throw new UsageError("expected a command (see ring0 --help)");
  }

  const [first, second] = words;
  let command: CommandName | undefined;
  if ((groups as readonly string[]).includes(first!)) {
    if (second === undefined) {
      if (values.help) return { kind: "help", text: helpText(undefined, first) };
      throw new UsageError(
        `expected a ${first} command: ${subcommandsOf(first!)} (see ring0 ${first} --help)`,
      );
    }
    const name = `${first} ${second}`;
    if (!commandNames.includes(name as CommandName)) {
      throw new UsageError(`unknown command "${name}": expected one of ${subcommandsOf(first!)}`);
    }
    command = name as CommandName;
    words.splice(0, 2);
  } else if (commandNames.includes(first as CommandName)) {
    command = first as CommandName;
    words.splice(0, 1);
  } else {
    throw new UsageError(`unknown command "${first}" (see ring0 --help)`);
  }
  if (values.help) return { kind: "help", text: helpText(command) };

  const spec: CommandSpec = commands[command];
  for (const name of Object.keys(values)) {
    if (name in globalOptions || name in spec.options) continue;
    throw new UsageError(`ring0 ${command} does not take --${name} (see ring0 ${command} --help)`);
  }
  if (words.length < spec.args.length) {
    throw new UsageError(
      `${spec.args[words.length]}: required (usage: ring0 ${command} ${spec.args.map((a) => `<${a}>`).join(" ")})`,
    );
  }
  const named = [...spec.args, ...(spec.optionalArgs ?? [])];
  if (words.length > named.length && !spec.rest) {
    throw new UsageError(`unexpected argument "${words[named.length]}" (see ring0 ${command} --help)`);
  }
  const args = Object.fromEntries(
    named.flatMap((name, index) => (index < words.length ? [[name, words[index]!]] : [])),
  );

  let output: OutputFormat = "table";
  let outputFile: string | undefined;
  if (typeof values.output === "string") {
    if (spec.outputHelp) outputFile = values.output;
    else {
      const format = outputFormat.safeParse(values.output);
      if (!format.success) throw new UsageError(format.error.issues[0]!.message);
      output = format.data;
    }
  }
  const options = Object.fromEntries(
    Object.entries(values).filter(([name]) => name in spec.options),
  ) as Record<string, string | boolean | string[] | undefined>;
  return {
    kind: "command",
    command,
    args,
    options,
    global: {
      output,
      url: typeof values.url === "string" ? values.url : undefined,
      token: typeof values.token === "string" ? values.token : undefined,
    },
    ...(outputFile !== undefined ? { outputFile } : {}),
    ...(spec.rest ? { rest: words.slice(named.length) } : {}),
  };
}

function subcommandsOf(group: string): string {
  return commandNames
    .filter((name) => name.startsWith(`${group} `))
    .map((name) => name.slice(group.length + 1))
    .join(", ");
}

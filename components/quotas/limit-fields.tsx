/** One text field per quota resource ("no limit" when empty): quota card, templates, default share. */
export function LimitFields({
  resources,
  values,
  onChange,
}: {
  resources: readonly { name: string }[];
  values: Record<string, string>;
  onChange: (values: Record<string, string>) => void;
}) {
  return (
    <>
      {resources.map((resource) => (
        <label key={resource.name} className="field">
          {resource.name}
          <input
            value={values[resource.name] ?? ""}
            placeholder="no limit"
            onChange={(event) => onChange({ ...values, [resource.name]: event.target.value })}
          />
        </label>
      ))}
    </>
  );
}

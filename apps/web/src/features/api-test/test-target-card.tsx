import { useEffect } from "react";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { SelectField } from "../../components/ui/select-field";
import { TextField } from "../../components/ui/text-field";
import { useApplications } from "../../lib/applications-query";

/** Which application to call and with which credentials. */
export function TestTargetCard({
  signedIn,
  slug,
  onSlugChange,
  apiKey,
  onApiKeyChange,
}: {
  signedIn: boolean;
  slug: string;
  onSlugChange: (slug: string) => void;
  apiKey: string;
  onApiKeyChange: (key: string) => void;
}) {
  return (
    <Card>
      <CardHeader
        title="Application"
        description="Pick one of yours or type the slug of any app you may call."
      />
      <CardBody className="grid gap-5 md:grid-cols-3">
        {signedIn && <ApplicationChooser slug={slug} onSlugChange={onSlugChange} />}
        <TextField
          label="App Slug"
          placeholder="my-app"
          autoComplete="off"
          spellCheck={false}
          value={slug}
          onChange={(event) => onSlugChange(event.target.value)}
        />
        <TextField
          label="API Key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          placeholder="pm_..."
          value={apiKey}
          hint="Optional: call with this key, as a consumer would, instead of your session."
          onChange={(event) => onApiKeyChange(event.target.value)}
        />
      </CardBody>
    </Card>
  );
}

function ApplicationChooser({ slug, onSlugChange }: { slug: string; onSlugChange: (slug: string) => void }) {
  const applications = useApplications();
  useEffect(() => {
    // SPEC §8: a failed list is only logged; the slug can still be typed.
    if (applications.error) console.warn("[api-test] applications failed to load", applications.error);
  }, [applications.error]);
  const apps = applications.data ?? [];
  const options = [
    { value: "", label: applications.isPending ? "Loading applications..." : "Select an application..." },
    ...apps.map((app) => ({ value: app.slug, label: `${app.name} (${app.slug})` })),
  ];
  const selected = apps.some((app) => app.slug === slug) ? slug : "";

  return (
    <SelectField
      label="Application"
      options={options}
      value={selected}
      disabled={applications.isPending}
      onChange={(event) => onSlugChange(event.target.value)}
    />
  );
}

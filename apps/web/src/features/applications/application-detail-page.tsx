import { BarChart3, CreditCard, FlaskConical, Package, Pencil } from "lucide-react";
import { useParams } from "react-router";
import { ButtonLink } from "../../components/ui/button";
import { ComingSoon } from "../../components/ui/coming-soon";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";

/** /applications/:slug */
export function ApplicationDetailPage() {
  const { slug = "" } = useParams();

  return (
    <PageContainer>
      <PageHeader
        eyebrow="Application"
        title={slug}
        description={<span className="font-mono">/{slug}</span>}
        actions={
          <>
            <ButtonLink to={`/applications/${slug}/edit`} variant="secondary" size="sm">
              <Pencil className="size-4" aria-hidden="true" />
              Edit
            </ButtonLink>
            <ButtonLink to={`/applications/${slug}/analytics`} variant="secondary" size="sm">
              <BarChart3 className="size-4" aria-hidden="true" />
              Analytics
            </ButtonLink>
            <ButtonLink to={`/applications/${slug}/billing`} variant="secondary" size="sm">
              <CreditCard className="size-4" aria-hidden="true" />
              Billing
            </ButtonLink>
            <ButtonLink to={`/api-test?app=${encodeURIComponent(slug)}`} size="sm">
              <FlaskConical className="size-4" aria-hidden="true" />
              Test API
            </ButtonLink>
          </>
        }
      />
      <ComingSoon icon={Package} description="Endpoint, status management and usage of this application." />
    </PageContainer>
  );
}

import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { type TSchema, Type } from "typebox";
import type { Database } from "../db/database.ts";
import { FORM_ID } from "../forms/forms.service.ts";
import { apiOperation } from "../http/api-responses.ts";
import { findIntakeForm } from "../intake/intake.repository.ts";
import type { FormViewCache } from "./form-view-cache.ts";
import type { HostedPages } from "./hosted-pages.ts";
import { PAGE_ASSETS } from "./page-assets.ts";

const FormIdParams = Type.Object({ formId: Type.String({ description: "Form id" }) });

const htmlPage = (description: string) =>
  ({ description, content: { "text/html": { schema: Type.String() } } }) as unknown as TSchema;

const formPage = apiOperation({
  operationId: "hostedFormPage",
  summary: "The hosted form's page",
  description:
    "HTML: the page a respondent fills in (hosted forms). A closed form shows its closed page " +
    "(200, no fields); an endpoint form, a deleted or a missing one, the 404 page.",
  tags: ["pages"],
  access: "public",
  htmlErrors: true,
});
const thanks = apiOperation({
  operationId: "thankYouPage",
  summary: "The thank-you page",
  description:
    "HTML: the form's own thank-you page (tp* members) when useCustomThankYouPage is on, " +
    "else a plain one. Browsers are sent here after a submission.",
  tags: ["pages"],
  access: "public",
  htmlErrors: true,
});

export const hostedRoutes: FastifyPluginAsyncTypebox<{
  db: Database;
  pages: HostedPages;
  forms: FormViewCache;
}> = async (app, { db, pages, forms }) => {
  // From memory when the form was read lately: a view of a known form makes no round trip.
  const find = (formId: string) =>
    FORM_ID.test(formId)
      ? forms.form(formId, () => findIntakeForm(db, formId, new Date()))
      : Promise.resolve(null);

  app.get(
    "/f/:formId",
    {
      schema: {
        ...formPage.schema,
        params: FormIdParams,
        response: formPage.responses(
          { 200: htmlPage("The form, or its closed page") },
          "not_found",
          "service_unavailable",
        ),
      },
    },
    async (request, reply) => pages.form(reply, await find(request.params.formId)),
  );

  app.get(
    "/f/:formId/thanks",
    {
      schema: {
        ...thanks.schema,
        params: FormIdParams,
        response: thanks.responses(
          { 200: htmlPage("The page") },
          "not_found",
          "service_unavailable",
        ),
      },
    },
    async (request, reply) => {
      const form = await find(request.params.formId);
      if (!form) return pages.notFound(reply);
      return pages.thanks(reply, form);
    },
  );

  for (const [path, asset] of Object.entries(PAGE_ASSETS)) {
    const svg = path.endsWith(".svg");
    const type = svg ? "image/svg+xml" : "text/javascript";
    const operation = apiOperation({
      operationId: asset.operationId,
      summary: svg ? "The pages' icon" : `The hosted page's module ${path.slice(8)}`,
      description: svg
        ? "The icon every page names."
        : "One of the page's two small modules: steps, live logic and checks, upload progress.",
      tags: ["pages"],
      access: "public",
    });
    app.get(
      path,
      {
        schema: {
          ...operation.schema,
          response: operation.responses({
            200: {
              description: svg ? "SVG image" : "JavaScript module",
              content: { [type]: { schema: Type.String() } },
            } as unknown as TSchema,
          }),
        },
      },
      async (_request, reply) =>
        reply
          .type(svg ? type : `${type}; charset=utf-8`)
          .header("Cache-Control", "public, max-age=300")
          .send(await asset.body()),
    );
  }
};

const { patterns, bodies } = require('../../scripts/eslint/outsideInput');

module.exports = require('@backstage/cli/config/eslint-factory')(__dirname, {
  restrictedSrcSyntax: [...patterns, ...bodies],
  overrides: [
    {
      // Test helpers shared by the unit and rack tests (never part of the operator build).
      files: ['src/testing/**'],
      rules: {
        '@backstage/no-undeclared-imports': 'off',
      },
    },
  ],
});

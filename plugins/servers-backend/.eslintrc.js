const { patterns } = require('../../scripts/eslint/outsideInput');

module.exports = require('@backstage/cli/config/eslint-factory')(__dirname, {
  restrictedSrcSyntax: [...patterns],
  overrides: [
    {
      // Test helpers shared by the route and rack tests (never imported by the plugin itself).
      files: ['src/testing/**'],
      rules: {
        '@backstage/no-undeclared-imports': 'off',
      },
    },
  ],
});

process.env.API_MODE = 'embedded';

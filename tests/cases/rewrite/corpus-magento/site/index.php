magento

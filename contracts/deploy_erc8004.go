package contracts

import (
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
)

// deployERC8004 puts the three ERC-8004 registries on the chain with create (DeployFrom's):
// the IdentityRegistry first, then the Reputation and Validation registries, each bound to
// it at construction. They have no owner and no parameters: anyone registers agents and gives
// feedback, as the standard says.
func deployERC8004(d *Deployment, create func(name string, meta *bind.MetaData, input []byte) (common.Address, error)) error {
	var err error
	if d.Contracts.IdentityRegistry, err = create("IdentityRegistry", &IdentityRegistryMetaData, nil); err != nil {
		return err
	}
	if d.Contracts.ReputationRegistry, err = create("ReputationRegistry", &ReputationRegistryMetaData,
		NewReputationRegistry().PackConstructor(d.Contracts.IdentityRegistry)); err != nil {
		return err
	}
	d.Contracts.ValidationRegistry, err = create("ValidationRegistry", &ValidationRegistryMetaData,
		NewValidationRegistry().PackConstructor(d.Contracts.IdentityRegistry))
	return err
}
